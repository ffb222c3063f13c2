"""opencl"""
