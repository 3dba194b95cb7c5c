"""Registry: get-or-create, aliases, plevels and providers, validation, MXNet defaults."""

from __future__ import annotations

import itertools

import pytest

from mxnext import ops as registry
from mxnext.base import OpNotFound, ParamError, PluginError, PluginWarning
from mxnext.params import Field, Param

_ids = itertools.count()


@pytest.fixture
def name():
    return f"_r_op{next(_ids)}"


def test_op_is_get_or_create_and_get_needs_a_definition(name):
    d = registry.op(name)
    assert registry.op(name) is d and d.provider is None
    with registry.providing("plug-gpu"):
        d.set_attr("FCompute<gpu>", len)
    with pytest.raises(OpNotFound, match=rf"{name}.*plug-gpu.*no plugin defines it"):
        registry.get(name)
    assert d not in registry.list_ops()
    with registry.providing("plug-a"):
        assert registry.define(name) is d
    assert registry.get(name) is d and d.provider == "plug-a" and d in registry.list_ops()
    assert d.get_attr("FCompute<gpu>") is len and d.attrs["FCompute<gpu>"].provider == "plug-gpu"


def test_unknown_op_suggests_close_names(name):
    with registry.providing("plug-a"):
        registry.define(name + "_softmax")
    with pytest.raises(OpNotFound, match=rf"did you mean '{name}_softmax'"):
        registry.get(name + "_sofmax")
    with pytest.raises(KeyError):
        registry.get(name + "_nothing_like_it")


def test_higher_plevel_wins_lower_is_ignored_and_recorded(name):
    d = registry.op(name)
    with registry.providing("plug-a"):
        registry.define(name)
        d.set_attr("FInferShape", "a10")
    with registry.providing("plug-b"):
        d.set_attr("FInferShape", "b5", plevel=5)
        assert d.get_attr("FInferShape") == "a10"
        d.set_attr("FInferShape", "b11", plevel=11)
    assert d.get_attr("FInferShape") == "b11"
    assert d.attrs["FInferShape"] == registry.AttrEntry("b11", 11, "plug-b")
    ignored = [(k, e.value) for k, e in d.ignored]
    assert ("FInferShape", "b5") in ignored and ("FInferShape", "a10") in ignored
    assert any(o == name and k == "FInferShape" for o, k, _ in registry.validate().ignored)


def test_equal_plevel_from_two_providers_is_an_error_naming_both(name):
    d = registry.op(name)
    with registry.providing("plug-a"):
        registry.define(name)
        d.set_attr("FCompute<cpu>", "a")
        d.set_attr("FCompute<cpu>", "a2")    # the same provider may replace its own entry
    with registry.providing("plug-b"), pytest.raises(PluginError) as info:
        d.set_attr("FCompute<cpu>", "b")
    assert "plug-a" in str(info.value) and "plug-b" in str(info.value) and name in str(info.value)
    assert d.get_attr("FCompute<cpu>") == "a2"
    assert registry.Conflict(name, "FCompute<cpu>", 10, "plug-a", "plug-b") in \
        registry.validate().conflicts


def test_two_plugins_cannot_both_define_an_op(name):
    with registry.providing("plug-a"):
        registry.define(name)
    with registry.providing("plug-b"), pytest.warns(PluginWarning, match="plug-a.*extend_op"):
        refused = registry.define(name)     # the newcomer's definition is refused, not raised
    assert registry.get(name).provider == "plug-a" and refused is not registry.get(name)
    assert registry.Refusal(name, "plug-a", "plug-b") in registry.refused()


def test_a_refused_definition_leaves_the_first_one_untouched(name):
    with registry.providing("plug-a"):
        d = registry.define(name)
        d.set_attr("FCompute<cpu>", "a")
    with registry.providing("plug-b"), pytest.warns(PluginWarning, match=rf"'{name}'.*plug-a"):
        refused = registry.define(name)
        refused.set_attr("FCompute<cpu>", "b")
        registry.add_alias(refused, name + "_b")
    assert d.get_attr("FCompute<cpu>") == "a" and d.aliases == []
    assert name + "_b" not in registry.names()
    assert all(c.op != name for c in registry.validate().conflicts)


def test_an_alias_another_plugin_holds_is_refused_and_the_op_defined(name):
    with registry.providing("plug-a"):
        registry.define(name)
    with registry.providing("plug-b"), pytest.warns(PluginWarning, match="plug-a.*plug-b"):
        d = registry.define(name + "_b")
        registry.add_alias(d, name)
    assert registry.get(name).provider == "plug-a" and registry.get(name + "_b") is d
    assert registry.Refusal(name, "plug-a", "plug-b") in registry.refused()
    with registry.providing("plug-b"), pytest.raises(PluginError, match="already names another op"):
        registry.add_alias(registry.define(name + "_c"), name + "_b")   # its own: a bug


@pytest.mark.parametrize("bad", ["bad name!", "", "1st", "a.b", None])
def test_op_names_and_aliases_must_be_identifiers(name, bad):
    with registry.providing("plug-a"), pytest.raises(PluginError, match="identifier.*got"):
        registry.define(bad)
    with registry.providing("plug-a"), pytest.raises(PluginError, match=f"alias of.*{name}"):
        registry.add_alias(registry.define(name), bad)
    assert bad not in registry.names()


def test_alias_resolves_and_absorbs_attrs_attached_before_definition(name):
    alias = name + "_Alias"
    with registry.providing("plug-gpu"):
        registry.op(alias).set_attr("FCompute<gpu>", "gpu-kernel")
    with registry.providing("plug-a"):
        d = registry.define(name)
        registry.add_alias(d, alias)
    assert registry.get(alias) is d and registry.op(alias) is d
    assert d.attrs["FCompute<gpu>"] == registry.AttrEntry("gpu-kernel", 10, "plug-gpu")
    assert all(o != alias for o, _, _ in registry.validate().orphans)


def test_validate_reports_orphans_and_gaps(name):
    with registry.providing("plug-gpu"):
        registry.op(name + "_orphan").set_attr("FCompute<gpu>", "k")
    with registry.providing("plug-a"):
        registry.define(name + "_gap").set_attr("FCompute<cpu>", "k")
    rep = registry.validate()
    assert (name + "_orphan", ["FCompute<gpu>"], ["plug-gpu"]) in rep.orphans
    assert (name + "_gap", ["FInferShape"]) in rep.gaps
    assert not rep.ok and "orphan" in str(rep)


def test_stateful_computes_and_backward_ops_are_no_gaps(name):
    with registry.providing("plug-a"):
        registry.define(name + "_stateful").set_attr("FInferShape", "s")
        registry.op(name + "_stateful").set_attr("FStatefulCompute<cpu>", "k")
        registry.define("_backward_" + name).set_attr("TIsBackward", True)
        registry.op("_backward_" + name).set_attr("FStatefulCompute<cpu>", "k")
    gaps = dict(registry.validate().gaps)
    assert name + "_stateful" not in gaps and "_backward_" + name not in gaps


def test_withdraw_removes_a_providers_entries_and_restores_overridden_ones(name):
    d = registry.op(name)
    with registry.providing("plug-a"):
        registry.define(name).set_attr("FInferShape", "a")
    with registry.providing("plug-broken"):
        d.set_attr("FInferShape", "broken", plevel=20)
        registry.define(name + "_mine").set_attr("FCompute<cpu>", "x")
    with registry.providing("plug-gpu"):
        registry.op(name + "_mine").set_attr("FCompute<gpu>", "g")
    registry.withdraw("plug-broken")
    assert d.get_attr("FInferShape") == "a" and d.attrs["FInferShape"].provider == "plug-a"
    with pytest.raises(OpNotFound):
        registry.get(name + "_mine")
    assert registry.op(name + "_mine").get_attr("FCompute<gpu>") == "g"


class CountParam(Param):
    num_args: int = Field(ge=1)
    axis: int = 0


def test_parse_params_is_cached_per_kwargs_and_errors_name_the_op(name):
    with registry.providing("plug-a"):
        d = registry.define(name)
    assert d.parse_params({"axis": 1}) is None      # MXNet: no parameters, keywords ignored
    assert d.parse_params({}) is None
    d.set_param_model(CountParam)
    p = d.parse_params({"num_args": "2", "axis": "1"})
    assert (p.num_args, p.axis) == (2, 1)
    assert d.parse_params({"axis": "1", "num_args": "2"}) is p
    assert d.parse_params({"num_args": 2, "axis": 1}) == p
    with pytest.raises(ParamError, match=rf"{name}.*'num_args'.*missing"):
        d.parse_params({})


def test_arity_and_name_defaults_follow_mxnet(name):
    with registry.providing("plug-a"):
        d = registry.define(name)
    assert d.num_inputs(None) == 1 and d.num_outputs(None) == 1
    assert d.list_output_names(None) == ["output"] and d.mutate_inputs(None) == []
    d.arguments += [registry.Argument("lhs", "NDArray-or-Symbol"),
                    registry.Argument("rhs", "NDArray-or-Symbol")]
    assert d.num_inputs(None) == 2 and d.list_input_names(None) == ["lhs", "rhs"]
    d.set_attr("FNumOutputs", lambda p: 3, provider="plug-a")
    d.set_attr("FNumVisibleOutputs", 1, provider="plug-a")
    assert d.list_output_names(None) == ["output0", "output1", "output2"]
    assert d.num_visible_outputs(None) == 1


def test_var_num_args_inputs_come_from_the_key_parameter(name):
    with registry.providing("plug-a"):
        d = registry.define(name)
        d.set_param_model(CountParam)
        d.arguments.append(registry.Argument("args", "NDArray-or-Symbol[]"))
        d.set_attr("key_var_num_args", "num_args")
    p = d.parse_params({"num_args": 3})
    assert d.num_inputs(p) == 3 and d.list_input_names(p) == ["arg0", "arg1", "arg2"]


def test_on_new_op_is_called_at_definition_and_after_providing_blocks(name):
    seen = []
    registry.on_new_op(lambda d: seen.append((d.name, d.description)))
    registry.define(name + "_user")
    assert seen[-1] == (name + "_user", "")
    with registry.providing("plug-a"):
        d = registry.define(name + "_plug")
        d.description = "complete"
        assert seen[-1][0] == name + "_user"
    assert seen[-1] == (name + "_plug", "complete")
    assert registry.get(name + "_user").provider == registry.USER


def test_get_attr_is_a_plain_dict_read(name):
    d = registry.op(name)
    d.set_attr("FInferType", "t", provider="plug-a")
    assert d.get_attr("FInferType") == "t" and d.get_attr("nope", 7) == 7
    assert d.has_attr("FInferType") and not d.has_attr("nope")
