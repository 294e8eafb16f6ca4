"""The static site: results files read and refused (`load`), combined into boards (`table`,
`order`, `gap`, `paired`, `paper`, `law`, `scatter`), drawn (`svg`, `plots`, `deep_links`) and
written (`page` and its `template/`, `export`, `probes_page`); `run_board` is `phybench run`'s
table beside the reference rows.  Above `common/` and `verify/`.
"""
