defmodule WellBehaved.External.ExitStatus do
  @moduledoc false
  # What a server's exit status says. A port reports only an integer: a
  # program killed by signal N reads 128 + N (the VM's child reaper gives
  # the shell's convention), so a real `exit(139)` reads the same as a
  # SIGSEGV: the log shows both the name and the status. Signal numbers
  # beyond the common ones differ between systems (BUS, USR1, USR2, SYS,
  # among others, on BSD and macOS): the table is chosen by `:os.type()`.
  # Checked on Linux: the SDK test job "crash" (SIGSEGV) exits 139, a
  # server the pool kills (SIGKILL) 137.
  #
  # The Linux table is the numbering of x86, ARM, RISC-V and PowerPC
  # (the generic one); MIPS, SPARC and Alpha number many signals
  # differently and would read wrong names. Linux's real-time signals,
  # 32 to 64, read as :SIGRT32 .. :SIGRT64 (the signal's own number, not
  # an offset from SIGRTMIN, which glibc puts at 34): a crash, not an
  # exit.

  # numbers shared by Linux, the BSDs and macOS
  @common %{
    1 => :SIGHUP,
    2 => :SIGINT,
    3 => :SIGQUIT,
    4 => :SIGILL,
    5 => :SIGTRAP,
    6 => :SIGABRT,
    8 => :SIGFPE,
    9 => :SIGKILL,
    11 => :SIGSEGV,
    13 => :SIGPIPE,
    14 => :SIGALRM,
    15 => :SIGTERM
  }

  @max_signal 64

  @linux Map.merge(@common, %{
           7 => :SIGBUS,
           10 => :SIGUSR1,
           12 => :SIGUSR2,
           16 => :SIGSTKFLT,
           17 => :SIGCHLD,
           18 => :SIGCONT,
           19 => :SIGSTOP,
           20 => :SIGTSTP,
           21 => :SIGTTIN,
           22 => :SIGTTOU,
           23 => :SIGURG,
           24 => :SIGXCPU,
           25 => :SIGXFSZ,
           26 => :SIGVTALRM,
           27 => :SIGPROF,
           28 => :SIGWINCH,
           29 => :SIGIO,
           30 => :SIGPWR,
           31 => :SIGSYS
         })
         |> Map.merge(Map.new(32..@max_signal, &{&1, :"SIGRT#{&1}"}))

  # FreeBSD, OpenBSD, NetBSD and macOS number these alike
  @bsd Map.merge(@common, %{
         7 => :SIGEMT,
         10 => :SIGBUS,
         12 => :SIGSYS,
         16 => :SIGURG,
         17 => :SIGSTOP,
         18 => :SIGTSTP,
         19 => :SIGCONT,
         20 => :SIGCHLD,
         21 => :SIGTTIN,
         22 => :SIGTTOU,
         23 => :SIGIO,
         24 => :SIGXCPU,
         25 => :SIGXFSZ,
         26 => :SIGVTALRM,
         27 => :SIGPROF,
         28 => :SIGWINCH,
         29 => :SIGINFO,
         30 => :SIGUSR1,
         31 => :SIGUSR2
       })

  @doc """
  The signal that `status` (from `{:exit_status, status}`) reports on
  this system, or `nil` for a plain exit (or a number the table lacks).

      iex> WellBehaved.External.ExitStatus.signal(137)
      :SIGKILL
      iex> WellBehaved.External.ExitStatus.signal(1)
      nil
      iex> WellBehaved.External.ExitStatus.signal(128 + 40, {:unix, :linux})
      :SIGRT40
      iex> WellBehaved.External.ExitStatus.signal(128 + 65, {:unix, :linux})
      nil

  The numbers differ between systems:

      iex> WellBehaved.External.ExitStatus.signal(128 + 10, {:unix, :linux})
      :SIGUSR1
      iex> WellBehaved.External.ExitStatus.signal(128 + 10, {:unix, :darwin})
      :SIGBUS
      iex> WellBehaved.External.ExitStatus.signal(128 + 9, {:unix, :sunos})
      :SIGKILL
      iex> WellBehaved.External.ExitStatus.signal(128 + 10, {:unix, :sunos})
      nil
  """
  @spec signal(integer()) :: atom() | nil
  def signal(status), do: signal(status, :os.type())

  @doc "`signal/1` for the system `os` (a `:os.type()` answer)."
  @spec signal(integer(), {atom(), atom()}) :: atom() | nil
  def signal(status, os) when status > 128 and status <= 128 + @max_signal do
    Map.get(table(os), status - 128)
  end

  def signal(_status, _os), do: nil

  defp table({:unix, :linux}), do: @linux
  defp table({:unix, bsd}) when bsd in [:darwin, :freebsd, :openbsd, :netbsd], do: @bsd
  defp table(_other), do: @common

  @doc """
  How the exit reads in a log line: "killed by SIGSEGV (status 139)" or
  "exited with status 1".

      iex> WellBehaved.External.ExitStatus.describe(139, :SIGSEGV)
      "killed by SIGSEGV (status 139)"
  """
  @spec describe(integer(), atom() | nil) :: String.t()
  def describe(status, nil), do: "exited with status #{status}"
  def describe(status, signal), do: "killed by #{signal} (status #{status})"
end
