"""phybench: does a video generation model learn physical laws, or only mimic its data?"""

__version__ = "0.1.0"
