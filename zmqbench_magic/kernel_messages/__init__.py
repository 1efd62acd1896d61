"""Jupyter's own messages, measured: a real kernel started from its kernelspec
(:mod:`.kernel`), one request's round trip and the stamps that cut it into stages
(:mod:`.trips`), and a run of interleaved rounds over a fresh kernel each
(:mod:`.sweep`). It speaks to the kernel as every Jupyter front end does, through
jupyter_client's ``Session`` over the kernel's ZeroMQ channels.
"""
