-- description: One row per transaction of the configured EVM chains (opt-in stream: every transaction from where the first run began), either status.
-- unique: chain_id, tx_hash
-- incremental: true
-- not_null: network, block_number, block_timestamp, block_hash, tx_status, from_address, value_exact
-- accepted_values: tx_status = 0 | 1
-- column: chain_id: the EVM chain id
-- column: network: mainnet or fuji
-- column: tx_hash: the transaction's hash
-- column: block_number: the block it is in
-- column: block_timestamp: the block's time (second precision)
-- column: block_timestamp_ms: the block's time to the millisecond (after the Granite upgrade; null before)
-- column: block_hash: the block's hash
-- column: block_index: its position in the block
-- column: tx_status: 1 (succeeded) or 0 (failed), as the API gives it
-- column: tx_type: the EIP-2718 type (0 legacy, 1 access list, 2 EIP-1559, …)
-- column: nonce: the sender's nonce
-- column: from_address: the sender (lowercase)
-- column: to_address: the recipient or called contract (lowercase)
-- column: method_call_type: NATIVE_TRANSFER, CONTRACT_CALL or CONTRACT_CREATION
-- column: method_hash: the called function's selector
-- column: method_name: the called function's name, where the API knows it
-- column: value: the native token sent, in wei (DECIMAL; null beyond 38 digits)
-- column: value_exact: the same amount as an exact decimal string (uint256)
-- column: gas_limit: the gas limit
-- column: gas_used: the gas used
-- column: gas_price_wei: the price paid per gas, in wei
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('evm_transactions') }}
),

newest as (
    select * from {{ newest('source', 'chain, txHash') }}
),

final as (
    select
        chain as chain_id,
        network,
        txHash as tx_hash,
        blockNumber as block_number,
        blockTimestamp as block_timestamp,
        blockTimestampMilliseconds as block_timestamp_ms,
        blockHash as block_hash,
        blockIndex as block_index,
        txStatus as tx_status,
        txType as tx_type,
        nonce,
        lower("from".address) as from_address,
        lower("to".address) as to_address,
        "method".callType as method_call_type,
        "method".methodHash as method_hash,
        "method".methodName as method_name,
        "value",
        valueExact as value_exact,
        gasLimit as gas_limit,
        gasUsed as gas_used,
        gasPrice as gas_price_wei,
        _extracted_at as extracted_at
    from newest
)

select * from final
