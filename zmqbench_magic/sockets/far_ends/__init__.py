"""What runs in the far ends' processes (or threads of the kernel), each ``python -m``:
a pair's far end (peer), a pattern's member, a driver process (worker) and a standing
far end's door (standing)."""
