"""Video diffusion transformer baseline (Kang et al. 2024, Sec. 2 / App. A)."""
