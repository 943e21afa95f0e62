-- description: Native token balance of each configured EVM address on each configured chain at the latest block, one row per address and chain per snapshot.
-- unique: chain_id, address, snapshot_at
-- incremental: true
-- not_null: network, token_symbol, token_decimals, balance_exact
-- column: chain_id: the EVM chain id
-- column: address: the configured address (lowercase)
-- column: network: mainnet or fuji
-- column: token_name: name of the chain's native token
-- column: token_symbol: symbol of the chain's native token
-- column: token_decimals: decimals of the native token
-- column: token_logo_uri: logo of the native token
-- column: balance: the balance in the token's smallest unit (wei; DECIMAL, null beyond 38 digits)
-- column: balance_exact: the same balance as an exact decimal string (uint256)
-- column: balance_tokens: balance scaled by the token's decimals
-- column: price_usd: USD price of the token at the snapshot, as the API gives it
-- column: balance_usd: the balance's USD value, as the API gives it
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('native_balances') }}
),

newest as (
    select * from {{ newest('source', 'chain, address, _snapshot_at') }}
),

final as (
    select
        chain as chain_id,
        lower(address) as address,
        network,
        "name" as token_name,
        symbol as token_symbol,
        decimals as token_decimals,
        logoUri as token_logo_uri,
        balance,
        balanceExact as balance_exact,
        cast(balanceExact as double) / pow(10, decimals) as balance_tokens,
        case when price.currencyCode = 'usd' then price."value" end as price_usd,
        case when balanceValue.currencyCode = 'usd' then balanceValue."value" end as balance_usd,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
