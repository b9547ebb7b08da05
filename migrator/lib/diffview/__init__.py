"""The diff view and the downloads of a run's translation, without Django: line alignment (an
anchored diff, since plain `difflib` is far too slow on large repetitive files), folding of
unchanged stretches, syntax highlighting of only the lines a page shows, changed-word marks, the
comparison of the original and translated trees, and git-format patches and archives of the
result. Payloads are plain picklable dataclasses, so a computed diff can be cached; every piece of
HTML is built from escaped text and fixed markup, so the review templates may mark it safe.
"""
