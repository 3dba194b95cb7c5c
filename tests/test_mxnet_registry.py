"""mx.registry: MXNet 1.9.1's class-registry helper, as libraries written for MXNet call it."""

import warnings

import pytest

import mxnext as mx
from mxnext.base import ParamError


class Thing:
    def __init__(self, size=1, colour="red"):
        self.size, self.colour = size, colour


register = mx.registry.get_register_func(Thing, "thing")
alias = mx.registry.get_alias_func(Thing, "thing")
create = mx.registry.get_create_func(Thing, "thing")


@register
@alias("small", "tiny")
class SmallThing(Thing):
    pass


def test_register_uses_the_lower_cased_class_name_and_aliases_add_names():
    assert {"smallthing", "small", "tiny"} <= set(mx.registry.get_registry(Thing))
    assert mx.registry.get_registry(Thing)["small"] is SmallThing
    assert register.__doc__ == "Register thing to the thing factory"


def test_get_registry_is_a_copy():
    mx.registry.get_registry(Thing)["other"] = Thing
    assert "other" not in mx.registry.get_registry(Thing)


def test_create_from_a_name_an_instance_a_dict_json_or_the_keyword():
    made = create("SmallThing", 3, colour="blue")
    assert type(made) is SmallThing and (made.size, made.colour) == (3, "blue")
    assert create(made) is made
    assert create({"thing": "tiny", "size": 4}).size == 4
    assert create('["small", {"size": 5}]').size == 5
    assert create('{"thing": "small", "colour": "green"}').colour == "green"
    assert create(thing="small").size == 1


def test_re_registering_a_name_warns_and_replaces():
    class Other(Thing):
        pass

    with pytest.warns(UserWarning, match="registered with name tiny is overriding existing "
                                         "thing .*SmallThing"):
        register(Other, "tiny")
    assert mx.registry.get_registry(Thing)["tiny"] is Other
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        register(SmallThing, "tiny")


def test_errors_name_the_kind_and_what_came():
    with pytest.raises(ParamError, match=r"thing.register: can only register a subclass of "
                                         r"Thing, got <class 'int'>"):
        register(int)
    with pytest.raises(ParamError, match=r"'nothing' is not registered; register it with "
                                         r"thing.register first"):
        create("nothing")
    with pytest.raises(ParamError, match="already an instance"):
        create(SmallThing(), 2)


def test_initializers_and_metrics_share_the_tables():
    assert mx.registry.get_registry(mx.init.Initializer)["xavier"] is mx.init.Xavier
    make = mx.registry.get_create_func(mx.metric.EvalMetric, "metric")
    assert isinstance(make("acc"), mx.metric.Accuracy)
