"""torchfix: vectorize slow element-at-a-time PyTorch code, and prove each rewrite equivalent."""

__version__ = "0.1.0"
