"""Strict YAML for blueprints: read exactly what libyaml reads, or decline; refuse the ambiguous.

The contract of this package, in two rules:

1. :func:`~.load.load_yaml` returns plain data (``dict``, ``list``, ``str``,
   ``int``, ``float``, ``bool``, ``None``) or raises
   ``dispatcher.blueprint_malformed``. It refuses anchors, aliases, tags,
   merge keys, duplicate keys, non-string keys, over-deep nesting, oversize
   input, and plain scalars that YAML 1.1 and 1.2 read differently (the full
   list is in :mod:`.load`). Every accepted document has one meaning.
2. The fast line parser (:mod:`._fast`, :mod:`._scalars`) never disagrees with
   libyaml: for any input it returns exactly what the libyaml path
   (:mod:`._libyaml`) would return, or it declines and libyaml decides. It
   refuses nothing on its own. Differential tests over the corpus and generated
   documents hold the two to this.

:mod:`._rules` holds the typing rules both paths share.
"""
