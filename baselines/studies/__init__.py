"""The studies, in one place (issue 50, item 5): each module one study or one piece of one,
above both model families, which know nothing of them.

`phybench study NAME` finds them through the `phybench.studies` entry points (pyproject.toml):
`scaling` (the paper's Figure 3 with our DiTs), `modality` (its Fig. 13) and `findings_command`
(`phybench study findings`: `findings` on one framear run, or `grid_findings` on a scaling grid).
Their pieces: `curve` (a run's learning curve), `cases` (where OOD fits land against the training
range), `grid` (the framear scaling grid's trainer), `paper_fig3` (the paper's Figure 3 numbers)
and `grid_plot` (the grid beside it).  What a study needs of a family (train, sample, a run's
fitted speeds) it imports from that family's `train` / `sample` / `runner`.
"""
