"""The slurm substrate: a Slurm cluster driven through its own client programs."""
