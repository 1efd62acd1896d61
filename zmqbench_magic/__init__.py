"""zmqbench_magic"""
