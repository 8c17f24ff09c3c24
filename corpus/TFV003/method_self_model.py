# A method collecting predictions from self.model with torch.concat and a negative dim.
import torch


class Predictor:
    def __init__(self, model):
        self.model = model

    def predict(self, batches):
        preds = torch.empty(0, 10)
        for xb in batches:
            preds = torch.concat([preds, self.model(xb).softmax(dim=-1)], dim=-2)
        return preds
