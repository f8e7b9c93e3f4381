"""The live page of what clients did, and its snapshot for a failed test."""
