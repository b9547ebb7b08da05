"""Delivering a run's port into the team's repository: the change (single source or converted copy),
the port branch composed over the CUDA branch, and the builds that verify it on both sides."""
