# The library's test helpers serve the lab's tests too.
Code.require_file("../../test/support/runtime_helpers.exs", __DIR__)
ExUnit.start()
