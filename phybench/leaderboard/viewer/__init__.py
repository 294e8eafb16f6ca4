"""The per-submission viewer (`phybench view`) and the board's viewers: building a viewer's data and
media (`viewer`, `viewer_media`, `viewer_sources`), linking them from the board (`board_viewers`),
and the viewer application (``template/viewer.*``) shipped as this package's data."""
