# Module-level script code with a comment above the loop.
import torch

data = torch.arange(12.0).reshape(6, 2)
result = torch.empty(0, 2)
# scale each row by its index
for idx in range(data.shape[0]):
    result = torch.cat([result, data[idx:idx + 1] * idx], dim=0)
print(result.shape)
