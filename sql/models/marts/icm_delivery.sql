-- description: ICM messages of the configured addresses with their delivery latency.
-- unique: network, message_id
-- incremental_by: message_id = message_id from stg_icm_messages
-- not_null: status, source_blockchain_id, destination_blockchain_id, is_pending
-- accepted_values: status = pending | delivered | delivered_source_not_indexed
-- column: message_id: the ICM message id
-- column: network: mainnet or fuji
-- column: status: pending, delivered, or delivered_source_not_indexed (delivered, the source transaction unknown to the API)
-- column: source_blockchain_id: the chain that sent it
-- column: destination_blockchain_id: the chain it is for
-- column: source_evm_chain_id: EVM chain id of the source
-- column: destination_evm_chain_id: EVM chain id of the destination
-- column: from_address: sender on the source chain (lowercase)
-- column: to_address: recipient on the destination chain (lowercase)
-- column: sent_at: time of the source transaction (null when the source is not indexed)
-- column: sent_day: UTC day of sent_at
-- column: delivered_at: time of the delivery on the destination chain, null while pending
-- column: delivered_day: UTC day of delivered_at
-- column: delivery_latency_seconds: delivered_at minus sent_at, in seconds; null while pending or when either time is unknown
-- column: is_pending: not delivered yet, as of the newest extract
-- column: source_tx_hash: the sending transaction
-- column: destination_tx_hash: the delivering transaction
with messages as (
    select * from stg_icm_messages
),

final as (
    select
        message_id,
        network,
        status,
        source_blockchain_id,
        destination_blockchain_id,
        source_evm_chain_id,
        destination_evm_chain_id,
        from_address,
        to_address,
        sent_at,
        -- Note: the UTC day whatever the session's TimeZone (a cast to date takes the session's day), without
        -- timezone('UTC', …)'s time-zone lookup for every row (about twenty times slower).
        cast(make_timestamp(epoch_us(sent_at)) as date) as sent_day,
        delivered_at,
        cast(make_timestamp(epoch_us(delivered_at)) as date) as delivered_day,
        cast(epoch(delivered_at) - epoch(sent_at) as bigint) as delivery_latency_seconds,
        status = 'pending' as is_pending,
        source_tx_hash,
        destination_tx_hash
    from messages
)

select * from final
