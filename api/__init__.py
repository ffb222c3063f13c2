"""
The Python API, the layer every entry point stands on: `compile` a model for the GPU
(OpenCL) or the DSP (Hexagon HVX), run it, save it and `load` it back (`compiled.py`);
bad input raises the one error type, `UserError` (`errors.py`); files appear whole or
not at all (`files.py`). The tools, the benchmarks and the tests call it; it is the one
place where a pipeline (`pipelines.py`) is chosen and run.
"""
