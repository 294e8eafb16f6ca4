"""The dataset-card files: the repo's top-level data_cards/, installed as package data of `phybench.data_cards`."""
