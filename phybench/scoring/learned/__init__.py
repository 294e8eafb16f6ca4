"""What a model learned: each body followed by the judge's tracker, and the law its motion fits."""
