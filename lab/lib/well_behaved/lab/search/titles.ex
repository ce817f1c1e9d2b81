defmodule WellBehaved.Lab.Search.Titles do
  @moduledoc """
  Product titles for the dedupe measurement, made from a seed alone (the
  same titles on every machine and run).

  A product is a brand, a product line, an adjective or two, a kind of
  product and a colour, with a model code (letters and digits), a
  capacity and a year, each present or not:
  `"Norvik Aurora KX420 Compact Wireless Speaker 20000mAh Graphite 2023"`.
  Products come in families of 1-4 that share every word but the ones
  holding digits (another model number, capacity or year): "iPhone 14"
  and "iPhone 15", which only a rule on numbers tells apart. About a
  fifth of the titles are near-duplicates of others, each changed once:
  two words swapped, the case of the title or of a word changed, a short
  word added, or a letter dropped from a word without digits (a dropped
  digit would be another product). Titles are ASCII, 53 bytes on
  average (27-85) among the suite's 50,000.
  """

  @brands ~w(Norvik Altena Brightwell Corvan Dalmore Elstree Fenwick Galloway Harlow Ivybridge
             Jarrow Kelso Lanark Mostyn Northam Oakley Penrith Quenby Redcar Selby Tenbury
             Ulverston Ventnor Wexford Yarmouth Zennor Ashby Brora Clovelly Dunbar Eyemouth
             Formby Girvan Hexham Ilkley Keswick Ludlow Malton Nairn Otley)
  @lines ~w(Aurora Summit Vertex Nimbus Horizon Pulse Quantum Zenith Echo Nova Orbit Prism Radiant
            Stellar Titan Vector Atlas Comet Drift Ember Falcon Glacier Harbor Ion Jade Kinetic
            Lumen Meridian Nexus Onyx Pioneer Quartz Ridge Sierra Tempo Unity Voyager Willow Xenon
            Yukon Zephyr Apex Beacon Cascade Delta Element Fusion Granite Helix Icon)
  @adjectives ~w(Compact Wireless Portable Professional Ultra Slim Smart Premium Rugged Classic
                 Digital Ergonomic Foldable Lightweight Waterproof Quiet Cordless Adjustable
                 Rechargeable Magnetic Stainless Insulated Modular Heavy-Duty Noise-Cancelling
                 Bluetooth Ceramic Carbon Titanium Vintage Outdoor Indoor Travel Mini Large Deluxe
                 Essential Advanced Turbo Gaming)
  @kinds [
    "Speaker",
    "Headphones",
    "Laptop",
    "Tablet",
    "Smartphone",
    "Blender",
    "Kettle",
    "Coffee Maker",
    "Vacuum Cleaner",
    "Air Purifier",
    "Power Bank",
    "Monitor",
    "Keyboard",
    "Mouse",
    "Router",
    "Smartwatch",
    "Camera",
    "Drone",
    "Projector",
    "Toaster",
    "Hair Dryer",
    "Electric Toothbrush",
    "Water Bottle",
    "Backpack",
    "Desk Lamp",
    "Space Heater",
    "Fitness Tracker",
    "Microphone",
    "Soundbar",
    "External Drive"
  ]
  @colours [
    "Black",
    "White",
    "Silver",
    "Graphite",
    "Midnight Blue",
    "Forest Green",
    "Rose Gold",
    "Space Grey",
    "Crimson",
    "Ivory",
    "Sand",
    "Teal",
    "Charcoal",
    "Coral",
    "Navy",
    "Olive",
    "Pearl White",
    "Slate",
    "Burgundy",
    "Champagne",
    "Mint",
    "Lavender",
    "Copper",
    "Arctic Blue"
  ]
  @prefixes ~w(KX TR ZX MB QL HV GT RX SL NV PX DX VK FM WL JB CT AZ EL UX)
  @capacities ~w(16GB 32GB 64GB 128GB 256GB 512GB 1TB 2TB 500ml 750ml 1L 1.5L 2L 5000mAh
                 10000mAh 20000mAh 20W 65W 100W 1200W)
  # short words a near-duplicate may gain
  @added ~w(New Hot Sale Top Kit Set Pack)

  @doc """
  `count` titles from `seed` (an integer): `%{titles: titles, copies:
  flags, products: n, near_duplicates: m}` where `n + m == count`, each
  near-duplicate comes after the title it was made from, and `copies`
  has one flag a title, `true` for a near-duplicate.

      iex> a = WellBehaved.Lab.Search.Titles.generate(200, 7)
      iex> a == WellBehaved.Lab.Search.Titles.generate(200, 7)
      true
      iex> {length(a.titles), a.products + a.near_duplicates}
      {200, 200}
      iex> Enum.count(a.copies, & &1)
      40
  """
  @spec generate(pos_integer(), integer()) :: %{
          titles: [String.t()],
          copies: [boolean()],
          products: non_neg_integer(),
          near_duplicates: non_neg_integer()
        }
  def generate(count, seed) when is_integer(count) and count > 0 and is_integer(seed) do
    state = :rand.seed_s(:exsss, {seed, 48, 5})
    near = div(count, 5)
    products = count - near
    {base, state} = products(products, state)
    base = List.to_tuple(base)

    # each near-duplicate after a random one of the products' titles
    {copies, _state} =
      Enum.map_reduce(1..near//1, state, fn _, st ->
        {i, st} = :rand.uniform_s(products, st)
        {title, st} = near_duplicate(elem(base, i - 1), st)
        {{i, title}, st}
      end)

    after_product = Enum.group_by(copies, &elem(&1, 0), &elem(&1, 1))

    {titles, copies} =
      base
      |> Tuple.to_list()
      |> Enum.with_index(1)
      |> Enum.flat_map(fn {title, i} ->
        [{title, false} | Enum.map(Map.get(after_product, i, []), &{&1, true})]
      end)
      |> Enum.unzip()

    %{titles: titles, copies: copies, products: products, near_duplicates: near}
  end

  # `n` product titles, in families of 1-4
  defp products(n, state), do: products(n, state, [])

  defp products(0, state, acc), do: {Enum.reverse(acc), state}

  defp products(n, state, acc) do
    {size, state} = :rand.uniform_s(4, state)
    {family, state} = family(min(size, n), state)
    products(n - length(family), state, Enum.reverse(family, acc))
  end

  # a family: shared words; each member after the first differs from it
  # in one part holding digits, by its rank (no two members alike); a
  # family with no such part has one member
  defp family(size, state) do
    {brand, state} = pick(@brands, state)
    {line, state} = pick(@lines, state)
    {adjectives, state} = adjectives(state)
    {kind, state} = pick(@kinds, state)
    {colour, state} = pick(@colours, state)
    {prefix, state} = pick(@prefixes, state)
    {number, state} = :rand.uniform_s(90, state)
    {capacity, state} = :rand.uniform_s(length(@capacities), state)
    {year, state} = :rand.uniform_s(11, state)
    {carried, state} = chances([model: 0.6, capacity: 0.4, year: 0.3], state)
    size = if carried == [], do: 1, else: size

    Enum.map_reduce(0..(size - 1)//1, state, fn k, st ->
      {varied, st} = if k == 0, do: {nil, st}, else: pick(carried, st)
      by = fn part -> if varied == part, do: k, else: 0 end

      words =
        [brand, line] ++
          if(:model in carried, do: ["#{prefix}#{(number + by.(:model)) * 10}"], else: []) ++
          adjectives ++
          [kind] ++
          if(:capacity in carried,
            do: [Enum.at(@capacities, rem(capacity - 1 + by.(:capacity), length(@capacities)))],
            else: []
          ) ++
          [colour] ++
          if(:year in carried, do: ["#{2014 + year + by.(:year)}"], else: [])

      {Enum.join(words, " "), st}
    end)
  end

  defp adjectives(state) do
    {n, state} = :rand.uniform_s(2, state)

    Enum.map_reduce(1..n, state, fn _, st -> pick(@adjectives, st) end)
    |> then(fn {list, st} -> {Enum.uniq(list), st} end)
  end

  # the parts drawn, each with its chance
  defp chances(parts, state) do
    {drawn, state} =
      Enum.map_reduce(parts, state, fn {part, p}, st ->
        {x, st} = :rand.uniform_s(st)
        {if(x < p, do: part), st}
      end)

    {Enum.reject(drawn, &is_nil/1), state}
  end

  defp pick(list, state) do
    {i, state} = :rand.uniform_s(length(list), state)
    {Enum.at(list, i - 1), state}
  end

  # one change of a title (see the module's documentation)
  defp near_duplicate(title, state) do
    words = String.split(title, " ")
    {how, state} = :rand.uniform_s(4, state)
    change(how, words, state)
  end

  # two words swapped
  defp change(1, words, state) do
    n = length(words)
    {i, state} = :rand.uniform_s(n, state)
    # another position than i
    {j, state} = :rand.uniform_s(n - 1, state)
    j = if j >= i, do: j + 1, else: j
    {a, b} = {Enum.at(words, i - 1), Enum.at(words, j - 1)}

    swapped = words |> List.replace_at(i - 1, b) |> List.replace_at(j - 1, a) |> Enum.join(" ")

    {swapped, state}
  end

  # the case of the whole title or of one word
  defp change(2, words, state) do
    {way, state} = :rand.uniform_s(3, state)

    case way do
      1 ->
        {words |> Enum.join(" ") |> String.downcase(), state}

      2 ->
        {words |> Enum.join(" ") |> String.upcase(), state}

      3 ->
        # a word with a lowercase letter (a title has its brand at least)
        lower = for {w, i} <- Enum.with_index(words), w != String.upcase(w), do: i
        {k, state} = :rand.uniform_s(length(lower), state)
        i = Enum.at(lower, k - 1)
        {words |> List.update_at(i, &String.upcase/1) |> Enum.join(" "), state}
    end
  end

  # a short word added somewhere
  defp change(3, words, state) do
    {word, state} = pick(@added, state)
    {i, state} = :rand.uniform_s(length(words) + 1, state)
    {words |> List.insert_at(i - 1, word) |> Enum.join(" "), state}
  end

  # a letter dropped from a word of four letters or more without digits
  defp change(4, words, state) do
    candidates =
      for {w, i} <- Enum.with_index(words),
          byte_size(w) >= 4 and not String.match?(w, ~r/\d/),
          do: i

    case candidates do
      [] ->
        change(2, words, state)

      _ ->
        {k, state} = :rand.uniform_s(length(candidates), state)
        i = Enum.at(candidates, k - 1)
        word = Enum.at(words, i)
        {at, state} = :rand.uniform_s(byte_size(word), state)
        dropped = binary_part(word, 0, at - 1) <> binary_part(word, at, byte_size(word) - at)
        {words |> List.replace_at(i, dropped) |> Enum.join(" "), state}
    end
  end
end
