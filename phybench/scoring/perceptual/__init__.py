"""Pixels compared as images: SSIM / PSNR, the pinned networks (LPIPS's AlexNet, FVD's I3D) and the set metrics' batching."""
