"""One pass over a submission: each video scored against its row, the results file and its sidecar written."""
