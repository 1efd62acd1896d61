"""The hot loops of one sample, the kernel's and the far ends': a pair's (Python, its
asyncio form, paced), a pattern's and its members', under pressure, and what they share
(timing, numbering, queues, a loop's own thread); the native loops in C (native)."""
