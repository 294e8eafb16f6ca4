"""The abnormality judge: pixels to colour layers and pieces, the rules as a table, the verdict."""
