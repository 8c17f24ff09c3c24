# Trap: the channels walked here are the crops of a Python list (each its own tensor, maybe of
# its own size): there is no one tensor to run the in-place chain on. The loop stays.
import torch


def center_crops(images: list) -> list:
    crops = [image[:, :32, :32] for image in images]
    for crop, mean in zip(crops, (0.5, 0.4, 0.3)):
        crop.sub_(mean)
    return crops
