-- description: One row per ERC-20 transfer log involving the configured EVM addresses.
-- unique: chain_id, tx_hash, log_index
-- not_null: block_number, block_timestamp, token_address, from_address, to_address
-- column: chain_id: the EVM chain id
-- column: network: mainnet or fuji
-- column: tx_hash: the transaction's hash
-- column: log_index: the Transfer log's position in the block
-- column: block_number: the block it is in
-- column: block_timestamp: the block's time (UTC)
-- column: block_hash: the block's hash
-- column: from_address: the sender (lowercase)
-- column: to_address: the recipient (lowercase)
-- column: token_address: the ERC-20 contract (lowercase)
-- column: token_symbol: the token's symbol
-- column: token_name: the token's name
-- column: token_decimals: the token's decimals
-- column: value: the amount in the token's smallest unit (DECIMAL; null beyond 38 digits)
-- column: value_exact: the same amount as an exact decimal string (uint256)
-- column: value_tokens: value scaled by the token's decimals (DOUBLE: approximate)
-- column: price_usd: USD price of the token, as the API gives it (null when it gives no USD price)
-- column: tracked_addresses: the configured addresses whose listing holds the transfer (lowercase)
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('erc20_transfers') }}
),

newest as (
    select * from {{ newest('source', 'chain, txHash, logIndex') }}
),

-- A transfer read in one address's listing only (most of them) is tracked by that address; only those
-- read more than once (in several listings, or again) need their addresses gathered. Found by the key's
-- hash as `newest` finds them, a collision only gathering a few more.
several as (
    select hash(chain, txHash, logIndex) as __key from source group by all having count(*) > 1
),

tracked as (
    select
        chain,
        txHash,
        logIndex,
        list(distinct lower(address) order by lower(address)) as tracked_addresses
    from source
    semi join several on hash(source.chain, source.txHash, source.logIndex) = several.__key
    group by chain, txHash, logIndex
),

final as (
    select
        newest.chain as chain_id,
        network,
        newest.txHash as tx_hash,
        newest.logIndex as log_index,
        blockNumber as block_number,
        blockTimestamp as block_timestamp,
        blockHash as block_hash,
        lower("from".address) as from_address,
        lower("to".address) as to_address,
        lower(erc20Token.address) as token_address,
        erc20Token.symbol as token_symbol,
        erc20Token.name as token_name,
        erc20Token.decimals as token_decimals,
        "value",
        valueExact as value_exact,
        cast(valueExact as double) / pow(10, erc20Token.decimals) as value_tokens,
        case when erc20Token.price.currencyCode = 'usd' then erc20Token.price.value end as price_usd,
        -- Note: the key's columns are required in the lake's files (never null), so every transfer
        -- finds its own key here, as in the inner join this left join replaced.
        coalesce(tracked.tracked_addresses, [lower(newest.address)]) as tracked_addresses,
        newest._extracted_at as extracted_at
    from newest
    left join tracked
        on newest.chain = tracked.chain
        and newest.txHash = tracked.txHash
        and newest.logIndex = tracked.logIndex
)

select * from final
