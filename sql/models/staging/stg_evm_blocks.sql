-- description: One row per block of the configured EVM chains (opt-in stream: every block from where the first run began).
-- unique: chain_id, block_number
-- incremental: true
-- not_null: network, block_timestamp, block_hash, parent_hash, tx_count, gas_used, gas_limit
-- column: chain_id: the EVM chain id
-- column: network: mainnet or fuji
-- column: block_number: the block's height
-- column: block_timestamp: the block's time (second precision)
-- column: block_timestamp_ms: the block's time to the millisecond (after the Granite upgrade; null before)
-- column: block_min_delay_excess: the block's minimum delay excess (after the Granite upgrade; null before)
-- column: block_hash: the block's hash
-- column: parent_hash: the hash of the block before it
-- column: tx_count: transactions in the block
-- column: cumulative_tx_count: transactions of the chain from genesis up to and including this block
-- column: base_fee_wei: the block's base fee per gas, in wei
-- column: gas_used: gas used by its transactions
-- column: gas_limit: the block's gas limit
-- column: gas_cost_wei: the gas cost of the block as the API gives it, in wei
-- column: fees_spent_wei: fees paid by its transactions, in wei
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('evm_blocks') }}
),

newest as (
    select * from {{ newest('source', 'chain, blockNumber') }}
),

final as (
    select
        chain as chain_id,
        network,
        blockNumber as block_number,
        blockTimestamp as block_timestamp,
        blockTimestampMilliseconds as block_timestamp_ms,
        blockMinDelayExcess as block_min_delay_excess,
        blockHash as block_hash,
        parentHash as parent_hash,
        txCount as tx_count,
        cumulativeTransactions as cumulative_tx_count,
        baseFee as base_fee_wei,
        gasUsed as gas_used,
        gasLimit as gas_limit,
        gasCost as gas_cost_wei,
        feesSpent as fees_spent_wei,
        _extracted_at as extracted_at
    from newest
)

select * from final
