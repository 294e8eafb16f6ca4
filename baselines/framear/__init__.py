"""Frame-autoregressive flow-matching video model: the learned baseline that learns on 2 CPU cores."""
