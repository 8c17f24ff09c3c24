# Hand-written optimum for columns_dim1.py: torch.vander builds the [1, x, x^2, ...] columns in one call.
import torch


def poly_features(x, degree):
    # x ** k by repeated products: the powers agree with x ** k to the last bit or two
    return torch.vander(x, N=degree + 1, increasing=True)
