"""The small CNN for 8x8 digit images that both examples use
(train_digits.py trains it, mask_memory.py measures what it saves)."""
from torch import nn


def digits_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 4 * 4, 128), nn.ReLU(),
        nn.Linear(128, 10))
