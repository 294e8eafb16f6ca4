"""Objects and their motion read from a generated video's pixels: photometry, the parser, the velocity errors."""
