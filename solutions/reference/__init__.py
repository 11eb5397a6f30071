"""One module per notebook; each answer cell is rendered from the function of the same name."""
