-- description: ERC-20 flows of each configured EVM address by chain, token and UTC day: in, out, net and transfer counts.
-- unique: network, chain_id, token_address, address, flow_day
-- not_null: count_transfers, count_in, count_out, in_amount, out_amount, net_amount
-- column: chain_id: the EVM chain id
-- column: token_address: the ERC-20 contract (lowercase)
-- column: address: a configured address (lowercase)
-- column: flow_day: UTC day of the transfers' blocks
-- column: network: mainnet or fuji
-- column: token_symbol: the token's symbol
-- column: token_decimals: the token's decimals
-- column: count_transfers: transfers to or from the address (a transfer to itself counts once)
-- column: count_in: transfers to the address
-- column: count_out: transfers from the address
-- column: in_amount: tokens received, in the token's smallest unit
-- column: out_amount: tokens sent, in the token's smallest unit
-- column: net_amount: in_amount minus out_amount
-- column: in_tokens: in_amount scaled by the token's decimals (DOUBLE, for reading)
-- column: out_tokens: out_amount scaled by the token's decimals (DOUBLE, for reading)
-- column: count_beyond_decimal: transfers whose value exceeds 38 digits, left out of the amounts (their exact value is in stg_erc20_transfers.value_exact)
with transfers as (
    select * from stg_erc20_transfers
),

legs as (
    select
        transfers.chain_id,
        transfers.token_address,
        tracked.address,
        -- Note: the UTC day whatever the session's TimeZone (a cast to date takes the session's day), without
        -- timezone('UTC', …)'s time-zone lookup for every row (about twenty times slower).
        cast(make_timestamp(epoch_us(transfers.block_timestamp)) as date) as flow_day,
        transfers.network,
        transfers.token_symbol,
        transfers.token_decimals,
        transfers.to_address = tracked.address as is_in,
        transfers.from_address = tracked.address as is_out,
        transfers."value"
    from transfers
    cross join lateral (select unnest(transfers.tracked_addresses) as address) as tracked
),

daily as (
    select
        chain_id,
        token_address,
        address,
        flow_day,
        network,
        any_value(token_symbol) as token_symbol,
        any_value(token_decimals) as token_decimals,
        count(*) as count_transfers,
        count(*) filter (where is_in) as count_in,
        count(*) filter (where is_out) as count_out,
        coalesce(sum("value") filter (where is_in), 0) as in_amount,
        coalesce(sum("value") filter (where is_out), 0) as out_amount,
        count(*) filter (where "value" is null) as count_beyond_decimal
    from legs
    group by network, chain_id, token_address, address, flow_day
),

final as (
    select
        chain_id,
        token_address,
        address,
        flow_day,
        network,
        token_symbol,
        token_decimals,
        count_transfers,
        count_in,
        count_out,
        in_amount,
        out_amount,
        in_amount - out_amount as net_amount,
        cast(in_amount as double) / pow(10, token_decimals) as in_tokens,
        cast(out_amount as double) / pow(10, token_decimals) as out_tokens,
        count_beyond_decimal
    from daily
)

select * from final
