"""Reinforcement learning: PPO, rollout storage, runners, schedules and evaluation."""
