"""``python -m torchfix``: the same as the ``torchfix`` console script."""

from torchfix.cli import main

if __name__ == "__main__":
    main()
