"""The kernel side of a run: the sweep and its rounds, one pair's sockets and control
channel, a pattern's hub and members, driver processes, far ends on other hosts, and
the one function that starts every process."""
