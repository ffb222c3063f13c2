"""Code generators and executors: OpenCL, Hexagon, and the numpy reference."""
