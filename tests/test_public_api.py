from __future__ import annotations

import boring_dispatch
from boring_dispatch import errors


def test_all_lists_the_public_names_sorted() -> None:
    assert boring_dispatch.__all__ == sorted(boring_dispatch.__all__)
    assert set(boring_dispatch.__all__) == {
        "Observation",
        "Registry",
        "Repository",
        "Sensitive",
        "Tool",
        "ToolError",
    }


def test_every_public_name_resolves() -> None:
    for name in boring_dispatch.__all__:
        assert getattr(boring_dispatch, name) is not None


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    try:
        boring_dispatch.__getattr__("os")
    except AttributeError:
        return
    raise AssertionError("unknown attributes must not resolve")


def test_every_error_class_has_a_unique_code_and_derives_from_the_root() -> None:
    classes = [getattr(errors, name) for name in errors.__all__]
    assert all(issubclass(cls, errors.DispatchError) for cls in classes)
    assert not any(issubclass(cls, (ValueError, OSError)) for cls in classes)
    codes = [cls.code for cls in classes if cls not in (errors.TableError, errors.RouteError)]
    assert len(codes) == len(set(codes))
