"""Where a run's sources come from: archives unpacked and git refs cloned safely, and the checks on
links and hosts that keep them inside the workspace."""
