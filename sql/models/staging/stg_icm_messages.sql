-- description: One row per ICM (cross-chain) message of the configured addresses, as of its newest status.
-- unique: message_id
-- not_null: status, source_blockchain_id, destination_blockchain_id
-- accepted_values: status = pending | delivered | delivered_source_not_indexed
-- column: sent_at: time of the source transaction (null when the source is not indexed: delivered_source_not_indexed)
-- column: delivered_at: time of the delivery on the destination chain, null while pending
with source as (
    select * from {{ lake('icm_messages') }}
),

newest as (
    select *
    from source
    qualify row_number() over (partition by messageId order by _extracted_at desc) = 1
),

final as (
    select
        messageId as message_id,
        network,
        status,
        icmContractAddress as icm_contract_address,
        sourceBlockchainId as source_blockchain_id,
        destinationBlockchainId as destination_blockchain_id,
        sourceEvmChainId as source_evm_chain_id,
        destinationEvmChainId as destination_evm_chain_id,
        messageNonceExact as message_nonce,
        lower("from") as from_address,
        lower("to") as to_address,
        messageExecuted as is_executed,
        receiptDelivered as is_receipt_delivered,
        sourceTransaction.txHash as source_tx_hash,
        sourceTransaction."timestamp" as sent_at,
        destinationTransaction.txHash as destination_tx_hash,
        destinationTransaction."timestamp" as delivered_at,
        rewardDetails.symbol as reward_token_symbol,
        rewardDetails.valueExact as reward_value_exact,
        _extracted_at as extracted_at
    from newest
)

select * from final
