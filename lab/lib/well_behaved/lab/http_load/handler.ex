defmodule WellBehaved.Lab.HttpLoad.Handler do
  @moduledoc """
  The httpd callback module of `WellBehaved.Lab.HttpLoad`: answers every
  request with `200 OK` and the same small plain-text body.
  """

  @body "hello, world\n"
  @body_chars String.to_charlist(@body)

  @doc "The body of every response."
  @spec body() :: String.t()
  def body, do: @body

  # httpd calls Module:do(ModData); `do` is a keyword in Elixir
  @doc false
  def unquote(:do)(_mod_data) do
    headers = [
      code: 200,
      content_type: ~c"text/plain",
      content_length: Integer.to_charlist(length(@body_chars))
    ]

    {:proceed, [response: {:response, headers, @body_chars}]}
  end
end
