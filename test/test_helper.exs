Code.require_file("support/reference.exs", __DIR__)
Code.require_file("support/runtime_helpers.exs", __DIR__)
Code.require_file("support/sdk_jobs.exs", __DIR__)
ExUnit.start()
