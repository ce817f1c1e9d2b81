# The library's test helpers serve the lab's tests too.
Code.require_file("../../test/support/runtime_helpers.exs", __DIR__)
Code.require_file("support/lab_run.exs", __DIR__)
ExUnit.start()
