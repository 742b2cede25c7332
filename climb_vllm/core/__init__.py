"""The ground floor: errors, configuration, run directories, results files, progress,
resampling and plotting helpers. Imports nothing else of the package (``tests/test_floors.py``
holds the order of the floors)."""
