"""Captures the reference Planner's bootstrap FPMs (scripts/conformance/run.ts, plannerReplayCore.ts).

On PYTHONPATH with BOOT_OUT set, this wraps `dynamo.replay.planner._ais_fpm_digest` (the function
that hashes the synthetic benchmark FPMs the replay installs into the Planner's perf models) in
every Python process of the run, and writes its arguments to BOOT_OUT as JSON. Nothing else changes.
"""
import importlib.abc, importlib.machinery, json, os, sys
class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "dynamo.replay.planner":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        orig_exec = spec.loader.exec_module
        def exec_module(module):
            orig_exec(module)
            orig = module._ais_fpm_digest
            def digest(prefill, decode):
                import msgspec
                with open(os.environ["BOOT_OUT"], "w") as f:
                    json.dump({"prefill": [msgspec.to_builtins(x) for x in prefill], "decode": [msgspec.to_builtins(x) for x in decode]}, f)
                return orig(prefill, decode)
            module._ais_fpm_digest = digest
        spec.loader.exec_module = exec_module
        return spec
if os.environ.get("BOOT_OUT"):
    import importlib.util
    sys.meta_path.insert(0, _Finder())
