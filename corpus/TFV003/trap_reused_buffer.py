# Trap: the piece is a view of a buffer overwritten in place each step; a list would keep only the last.
import torch


def rollout(env_step, steps):
    obs = torch.zeros(4)
    trajectory = torch.empty(0, 4)
    for t in range(steps):
        obs.copy_(env_step(obs))
        trajectory = torch.cat([trajectory, obs[None]], dim=0)
    return trajectory
