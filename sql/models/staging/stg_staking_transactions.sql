-- description: One row per P-Chain staking transaction of the configured addresses.
-- unique: tx_hash
-- not_null: tx_type, block_timestamp, block_number
-- column: amount_staked_navax: AVAX staked by the transaction, in nAVAX
-- column: amount_burned_navax: fees burned, in nAVAX
with source as (
    select * from {{ lake('staking_transactions') }}
),

newest as (
    select *
    from source
    qualify row_number() over (partition by txHash order by _extracted_at desc) = 1
),

final as (
    select
        txHash as tx_hash,
        network,
        txType as tx_type,
        blockTimestamp as block_timestamp,
        blockNumber as block_number,
        blockHash as block_hash,
        nodeId as node_id,
        subnetId as subnet_id,
        startTimestamp as started_at,
        endTimestamp as ended_at,
        cast(delegationFeePercent as decimal(9, 4)) as delegation_fee_percent,
        estimatedReward as estimated_reward_navax,
        rewardTxHash as reward_tx_hash,
        rewardAddresses as reward_addresses,
        (select sum(a.amount) from unnest(amountStaked) as t(a)) as amount_staked_navax,
        (select sum(a.amount) from unnest(amountBurned) as t(a)) as amount_burned_navax,
        len(consumedUtxos) as consumed_utxo_count,
        len(emittedUtxos) as emitted_utxo_count,
        _extracted_at as extracted_at
    from newest
)

select * from final
