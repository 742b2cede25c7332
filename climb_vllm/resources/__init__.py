"""Shared reference resources, read by every floor above: the ICD-10-CM ontology and its other
names, the first-name sets, and the locator of packaged data files."""
